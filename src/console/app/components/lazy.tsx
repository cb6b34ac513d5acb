/** A page loaded on first use (its own chunk): charts are not part of the first page's JavaScript. */
import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export function lazyPage<P extends object>(load: () => Promise<ComponentType<P>>): ComponentType<P> {
  let loaded: ComponentType<P> | null = null;
  return function LazyPage(props: P) {
    const [Comp, setComp] = useState<ComponentType<P> | null>(() => loaded);
    const [error, setError] = useState<Error | null>(null);
    useEffect(() => {
      if (Comp) return;
      load().then((c) => {
        loaded = c;
        setComp(() => c);
      }, setError);
    }, []);
    if (error) return <p class="error">Could not load this page: {error.message}</p>;
    return Comp ? <Comp {...props} /> : <p class="muted">Loading…</p>;
  };
}
