/**
 * A small path router. uWS matches routes itself, but unmatched requests get no answer at all and trailing-slash
 * variants must be registered twice; PostHog clients send both forms. Quill therefore registers one catch-all on
 * uWS and matches here: trailing slash optional, static segments before `:params`, 405 when the path exists but
 * not for that method. HEAD is not matched here: the front asks for the GET route (src/front/front.ts `handle`).
 */
interface Node<T> {
  statics: Map<string, Node<T>>;
  param: { name: string; node: Node<T> } | null;
  handlers: Map<string, T>;
}

export type RouteMatch<T> =
  | { kind: 'found'; value: T; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allowed: string[] }
  | { kind: 'not_found' };

const newNode = <T>(): Node<T> => ({ statics: new Map(), param: null, handlers: new Map() });

function segmentsOf(path: string): string[] {
  return path.split('/').filter((s) => s.length > 0);
}

export class Router<T> {
  private readonly root: Node<T> = newNode();

  add(method: string, pattern: string, value: T): this {
    let node = this.root;
    for (const seg of segmentsOf(pattern)) {
      if (seg.startsWith(':')) {
        const name = seg.slice(1);
        if (node.param && node.param.name !== name) {
          throw new Error(`route ${pattern}: parameter :${name} clashes with :${node.param.name}`);
        }
        node.param ??= { name, node: newNode() };
        node = node.param.node;
      } else {
        let next = node.statics.get(seg);
        if (!next) node.statics.set(seg, (next = newNode()));
        node = next;
      }
    }
    const m = method.toUpperCase();
    if (node.handlers.has(m)) throw new Error(`route ${m} ${pattern} registered twice`);
    node.handlers.set(m, value);
    return this;
  }

  match(method: string, path: string): RouteMatch<T> {
    const params: Record<string, string> = {};
    const node = this.walk(this.root, segmentsOf(path), 0, params);
    if (!node) return { kind: 'not_found' };
    const value = node.handlers.get(method);
    if (value !== undefined) return { kind: 'found', value, params };
    return { kind: 'method_not_allowed', allowed: [...node.handlers.keys()] };
  }

  /** Depth-first: a static segment wins, but if it leads nowhere the `:param` branch is tried. */
  private walk(node: Node<T>, segs: string[], i: number, params: Record<string, string>): Node<T> | null {
    if (i === segs.length) return node.handlers.size > 0 ? node : null;
    const seg = segs[i]!;
    const stat = node.statics.get(seg);
    if (stat) {
      const found = this.walk(stat, segs, i + 1, params);
      if (found) return found;
    }
    if (node.param) {
      let value: string;
      try {
        value = decodeURIComponent(seg);
      } catch {
        value = seg;
      }
      const found = this.walk(node.param.node, segs, i + 1, params);
      if (found) {
        params[node.param.name] = value;
        return found;
      }
    }
    return null;
  }
}
