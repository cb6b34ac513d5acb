import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api';

export interface Loaded<T> {
  data: T | null;
  error: Error | null;
  loading: boolean;
  reload(): void;
}

/** GET `path` whenever it changes (null: nothing to load); the newest request wins. */
export function useGet<T = any>(path: string | null): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; error: Error | null; loading: boolean }>({ data: null, error: null, loading: path !== null });
  const [tick, setTick] = useState(0);
  const shown = useRef(path);
  useEffect(() => {
    if (path === null) return;
    const ctl = new AbortController();
    // A reload keeps what is shown until the answer comes; another address (another project, filter, page) does not.
    const samePath = shown.current === path;
    shown.current = path;
    setState((s) => ({ data: samePath ? s.data : null, loading: true, error: null }));
    api.get<T>(path, ctl.signal).then(
      (data) => setState({ data, error: null, loading: false }),
      (error: Error) => {
        if (!ctl.signal.aborted) setState({ data: null, error, loading: false });
      },
    );
    return () => ctl.abort();
  }, [path, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/** Calls `fn` every `ms` while mounted (and once at once); never two calls at a time. */
export function useInterval(fn: () => Promise<void> | void, ms: number, deps: unknown[]): void {
  const saved = useRef(fn);
  saved.current = fn;
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      try {
        await saved.current();
      } catch {
        /* shown by the caller; keep polling */
      }
      if (!stopped) timer = setTimeout(run, ms);
    };
    run();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, deps);
}

/** A value from the address's query string, and a setter that replaces it (so filters survive a reload). */
export function useQueryParam(name: string): [string, (v: string) => void] {
  const read = () => new URLSearchParams(location.search).get(name) ?? '';
  const [value, setValue] = useState(read);
  const set = useCallback((v: string) => {
    const u = new URL(location.href);
    if (v) u.searchParams.set(name, v);
    else u.searchParams.delete(name);
    history.replaceState(history.state, '', u.pathname + u.search);
    setValue(v);
  }, [name]);
  return [value, set];
}

/** `value` once it has stopped changing for `ms` (search as you type without a request per key). */
export function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}
