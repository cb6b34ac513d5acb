/**
 * A paths answer (edges `{source, target, value}` with `<step>_<item>` keys) as a flow diagram: d3-sankey lays the
 * nodes and links out, this draws them as SVG; a link opens the persons who went that way.
 *
 * Readable at any width: the SVG is drawn at the pixel width of its container (so text stays 12 px, not scaled),
 * or wider with a sideways scroll when the container gives a step less than MIN_COLUMN (a dashboard tile),
 * each step is its own column (a node's step, not its distance from the end, picks the column), the height grows
 * with the busiest column so nodes keep a gap a label fits in, and every label sits in a lane right of its node's
 * bar (tinted in the node's colour), where no link passes: links leave from the lane's end. A label is cut with an
 * ellipsis to its lane; the full name is its tooltip.
 */
import { sankey, sankeyLinkHorizontal, type SankeyLink, type SankeyNode } from 'd3-sankey';
import { useContext, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { PALETTE } from './time-series-chart';
import { PersonsDialog } from './persons-dialog';
import { fitText } from '../lib/fit-text';
import { SharedViewContext } from '../lib/shared-view';

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
/** The least width links get between two columns. */
const MIN_LINKS = 48;
/** The least width of a column (bar, label lane and links): a narrower container scrolls sideways instead. */
const MIN_COLUMN = 140;

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
  const [open, setOpen] = useState<{ title: string; url: string; count: number } | null>(null);
  const shared = useContext(SharedViewContext);
  const [host, measured] = useWidth<HTMLDivElement>();
  const available = Math.max(320, measured || 1000);
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
    // Each column is the node's bar and a lane for its label; links leave from the lane's end, so none passes under
    // a label. The lane is as wide as the longest label needs, leaving the links at least MIN_LINKS of the column's
    // share of the width.
    const width = Math.max(available, steps * MIN_COLUMN + 8);
    const share = (width - 8) / steps;
    const through = new Map<string, { in: number; out: number }>();
    for (const e of props.result) {
      const from = through.get(e.source) ?? { in: 0, out: 0 };
      const to = through.get(e.target) ?? { in: 0, out: 0 };
      from.out += e.value;
      to.in += e.value;
      through.set(e.source, from).set(e.target, to);
    }
    // A node's value as d3-sankey counts it: the larger of what flows in and out.
    const needed = Math.max(...nodes.map((n) => textWidth(`${n.name} (${Math.max(through.get(n.id)!.in, through.get(n.id)!.out)})`))) + 2 * LABEL_OFFSET;
    const lane = Math.round(Math.max(36, Math.min(needed, 260, steps === 1 ? share - NODE_WIDTH : share - NODE_WIDTH - MIN_LINKS)));
    const graph = sankey<{ id: string; name: string; step: number }, { key: [string, string] }>()
      .nodeId((n) => n.id).nodeAlign((n) => n.step - 1).nodeWidth(NODE_WIDTH + lane).nodePadding(NODE_GAP)
      .extent([[4, 8], [width - 4, height - 8]])({ nodes, links });
    const room = lane - 2 * LABEL_OFFSET;
    return { graph, width, height, steps, room };
  }, [props.result, props.height, available]);
  // The wrapper is there even without paths, so its width is known when an answer with paths arrives.
  if (!layout) return <div class="paths-flow" ref={host} data-testid="paths-empty"><p class="muted">No paths for these filters.</p></div>;
  const path = sankeyLinkHorizontal();
  const { graph, width, height } = layout;
  return (
    <div class="paths-flow" ref={host} data-testid="paths-flow" data-nodes={graph.nodes.length} data-links={graph.links.length} data-steps={layout.steps}>
      <svg viewBox={`0 0 ${width} ${height}`} width={width} height={height} role="img" aria-label="paths">
        <g fill="none">
          {graph.links.map((l: Link, i) => (
            <path key={i} d={path(l) ?? ''} stroke={PALETTE[((l.source as Node).step - 1) % PALETTE.length]} stroke-opacity={0.35} stroke-width={Math.max(1, l.width ?? 1)}
              class="clickable" data-testid="path-link" onClick={() => props.personsUrl && setOpen({ title: `${(l.source as Node).name} → ${(l.target as Node).name}`, url: props.personsUrl(l.key[0], l.key[1]), count: l.value })}>
              <title>{`${(l.source as Node).name} → ${(l.target as Node).name}: ${l.value}`}</title>
            </path>
          ))}
        </g>
        {graph.nodes.map((n: Node) => (
          <g key={n.id} data-testid="path-node" data-step={n.step}>
            <rect x={n.x0} y={n.y0} width={(n.x1 ?? 0) - (n.x0 ?? 0)} height={Math.max(1, (n.y1 ?? 0) - (n.y0 ?? 0))} fill={PALETTE[(n.step - 1) % PALETTE.length]} fill-opacity={0.12} />
            <rect class="path-bar" x={n.x0} y={n.y0} width={NODE_WIDTH} height={Math.max(1, (n.y1 ?? 0) - (n.y0 ?? 0))} fill={PALETTE[(n.step - 1) % PALETTE.length]} />
            <text class="path-label" x={(n.x0 ?? 0) + NODE_WIDTH + LABEL_OFFSET} y={((n.y0 ?? 0) + (n.y1 ?? 0)) / 2} dy="0.35em" style={{ font: LABEL_FONT }}>
              <title>{`${n.name} (${n.value})`}</title>
              {fitText(n.name, ` (${n.value})`, layout.room, textWidth)}
            </text>
          </g>
        ))}
      </svg>
      {open && !shared && <PersonsDialog projectId={props.projectId} title={open.title} url={open.url} count={open.count} onClose={() => setOpen(null)} />}
    </div>
  );
}
