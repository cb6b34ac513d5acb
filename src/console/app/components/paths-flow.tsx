/**
 * A paths answer (edges `{source, target, value}` with `<step>_<item>` keys) as a flow diagram: d3-sankey lays the
 * nodes and links out, this draws them as SVG; a link opens the persons who went that way.
 *
 * Readable at any width: the SVG is drawn at the pixel width of its container (so text stays 12 px, not scaled),
 * each step is its own column (a node's step, not its distance from the end, picks the column), the height grows
 * with the busiest column so nodes keep a gap a label fits in, and every label sits right of its node, cut with an
 * ellipsis to the room before the next column (the last column's labels get a margin of their own); the full name
 * is the label's tooltip. A halo keeps a label legible where links pass under it.
 */
import { sankey, sankeyLinkHorizontal, type SankeyLink, type SankeyNode } from 'd3-sankey';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { PALETTE } from './time-series-chart';
import { PersonsDialog } from './persons-dialog';
import { fitText } from '../lib/fit-text';

export interface PathEdge {
  source: string;
  target: string;
  value: number;
  average_conversion_time?: number;
}

type Node = SankeyNode<{ id: string; name: string; step: number }, { key: [string, string] }>;
type Link = SankeyLink<{ id: string; name: string; step: number }, { key: [string, string] }>;

const LABEL_FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
const NODE_WIDTH = 12;
/** Vertical gap between nodes of a column: more than a label's height, so labels of one column never touch. */
const NODE_GAP = 20;
const LABEL_OFFSET = 6;

/** `3_/pricing` → step 3, item "/pricing". */
export function splitKey(key: string): { step: number; name: string } {
  const cut = key.indexOf('_');
  return { step: Number(key.slice(0, cut)), name: key.slice(cut + 1) };
}

let measurer: CanvasRenderingContext2D | null = null;
function textWidth(text: string): number {
  measurer ??= document.createElement('canvas').getContext('2d')!;
  measurer.font = LABEL_FONT;
  return measurer.measureText(text).width;
}

/** The width of the element, following its resizes (0 before it is laid out). */
function useWidth<T extends HTMLElement>(): [preact.RefObject<T>, number] {
  const ref = useRef<T>(null);
  const [width, setWidth] = useState(0);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    setWidth(el.clientWidth);
    const watch = new ResizeObserver(() => setWidth(el.clientWidth));
    watch.observe(el);
    return () => watch.disconnect();
  }, []);
  return [ref, width];
}

export function PathsFlow(props: { result: PathEdge[]; projectId: number; personsUrl?: (source: string, target: string) => string; height?: number }) {
  const [open, setOpen] = useState<{ title: string; url: string } | null>(null);
  const [host, measured] = useWidth<HTMLDivElement>();
  const width = Math.max(320, measured || 1000);
  const layout = useMemo(() => {
    const ids = new Set<string>();
    for (const e of props.result) {
      ids.add(e.source);
      ids.add(e.target);
    }
    const nodes = [...ids].map((id) => ({ id, ...splitKey(id) }));
    if (nodes.length === 0) return null;
    const links = props.result.map((e) => ({ source: e.source, target: e.target, value: e.value, key: [e.source, e.target] as [string, string] }));
    const steps = Math.max(...nodes.map((n) => n.step));
    const busiest = Math.max(...Array.from({ length: steps }, (_, s) => nodes.filter((n) => n.step === s + 1).length));
    const height = Math.max(props.height ?? 460, busiest * (NODE_GAP + 10) + 16);
    // The last column's labels need room right of it; the others have the gap to the next column.
    const lastRoom = Math.min(220, Math.round(width * 0.2));
    const graph = sankey<{ id: string; name: string; step: number }, { key: [string, string] }>()
      .nodeId((n) => n.id).nodeAlign((n) => n.step - 1).nodeWidth(NODE_WIDTH).nodePadding(NODE_GAP)
      .extent([[4, 8], [width - lastRoom, height - 8]])({ nodes, links });
    const columnGap = steps > 1 ? (width - lastRoom - 4 - NODE_WIDTH) / (steps - 1) - NODE_WIDTH : 0;
    const room = (n: Node) => (n.step === steps ? lastRoom : columnGap) - 2 * LABEL_OFFSET;
    return { graph, height, steps, room };
  }, [props.result, props.height, width]);
  // The wrapper is there even without paths, so its width is known when an answer with paths arrives.
  if (!layout) return <div class="paths-flow" ref={host} data-testid="paths-empty"><p class="muted">No paths for these filters.</p></div>;
  const path = sankeyLinkHorizontal();
  const { graph, height } = layout;
  return (
    <div class="paths-flow" ref={host} data-testid="paths-flow" data-nodes={graph.nodes.length} data-links={graph.links.length} data-steps={layout.steps}>
      <svg viewBox={`0 0 ${width} ${height}`} width={width} height={height} role="img" aria-label="paths">
        <g fill="none">
          {graph.links.map((l: Link, i) => (
            <path key={i} d={path(l) ?? ''} stroke={PALETTE[((l.source as Node).step - 1) % PALETTE.length]} stroke-opacity={0.35} stroke-width={Math.max(1, l.width ?? 1)}
              class="clickable" data-testid="path-link" onClick={() => props.personsUrl && setOpen({ title: `${(l.source as Node).name} → ${(l.target as Node).name}`, url: props.personsUrl(l.key[0], l.key[1]) })}>
              <title>{`${(l.source as Node).name} → ${(l.target as Node).name}: ${l.value}`}</title>
            </path>
          ))}
        </g>
        {graph.nodes.map((n: Node) => (
          <g key={n.id} data-testid="path-node" data-step={n.step}>
            <rect x={n.x0} y={n.y0} width={(n.x1 ?? 0) - (n.x0 ?? 0)} height={Math.max(1, (n.y1 ?? 0) - (n.y0 ?? 0))} fill={PALETTE[(n.step - 1) % PALETTE.length]} />
            <text class="path-label" x={(n.x1 ?? 0) + LABEL_OFFSET} y={((n.y0 ?? 0) + (n.y1 ?? 0)) / 2} dy="0.35em" style={{ font: LABEL_FONT }}>
              <title>{`${n.name} (${n.value})`}</title>
              {fitText(n.name, ` (${n.value})`, layout.room(n), textWidth)}
            </text>
          </g>
        ))}
      </svg>
      {open && <PersonsDialog projectId={props.projectId} title={open.title} url={open.url} onClose={() => setOpen(null)} />}
    </div>
  );
}
