/**
 * A paths answer (edges `{source, target, value}` with `<step>_<item>` keys) as a flow diagram: d3-sankey lays the
 * nodes and links out, this draws them as SVG; a link opens the persons who went that way.
 */
import { sankey, sankeyLinkHorizontal, type SankeyLink, type SankeyNode } from 'd3-sankey';
import { useMemo, useState } from 'preact/hooks';
import { PALETTE } from './time-series-chart';
import { PersonsDialog } from './persons-dialog';

export interface PathEdge {
  source: string;
  target: string;
  value: number;
  average_conversion_time?: number;
}

type Node = SankeyNode<{ id: string; name: string; step: number }, { key: [string, string] }>;
type Link = SankeyLink<{ id: string; name: string; step: number }, { key: [string, string] }>;

/** `3_/pricing` → step 3, item "/pricing". */
export function splitKey(key: string): { step: number; name: string } {
  const cut = key.indexOf('_');
  return { step: Number(key.slice(0, cut)), name: key.slice(cut + 1) };
}

export function PathsFlow(props: { result: PathEdge[]; projectId: number; personsUrl?: (source: string, target: string) => string; height?: number }) {
  const [open, setOpen] = useState<{ title: string; url: string } | null>(null);
  const width = 1000;
  const height = props.height ?? 460;
  const layout = useMemo(() => {
    const ids = new Set<string>();
    for (const e of props.result) {
      ids.add(e.source);
      ids.add(e.target);
    }
    const nodes = [...ids].map((id) => ({ id, ...splitKey(id) }));
    const links = props.result.map((e) => ({ source: e.source, target: e.target, value: e.value, key: [e.source, e.target] as [string, string] }));
    if (nodes.length === 0) return null;
    return sankey<{ id: string; name: string; step: number }, { key: [string, string] }>()
      .nodeId((n) => n.id).nodeWidth(12).nodePadding(14).extent([[4, 8], [width - 4, height - 8]])({ nodes, links });
  }, [props.result, height]);
  if (!layout) return <p class="muted">No paths for these filters.</p>;
  const path = sankeyLinkHorizontal();
  return (
    <div class="paths-flow" data-testid="paths-flow" data-nodes={layout.nodes.length} data-links={layout.links.length}>
      <svg viewBox={`0 0 ${width} ${height}`} width="100%" role="img" aria-label="paths">
        <g fill="none">
          {layout.links.map((l: Link, i) => (
            <path key={i} d={path(l) ?? ''} stroke={PALETTE[((l.source as Node).step - 1) % PALETTE.length]} stroke-opacity={0.35} stroke-width={Math.max(1, l.width ?? 1)}
              class="clickable" data-testid="path-link" onClick={() => props.personsUrl && setOpen({ title: `${(l.source as Node).name} → ${(l.target as Node).name}`, url: props.personsUrl(l.key[0], l.key[1]) })}>
              <title>{`${(l.source as Node).name} → ${(l.target as Node).name}: ${l.value}`}</title>
            </path>
          ))}
        </g>
        {layout.nodes.map((n: Node) => (
          <g key={n.id}>
            <rect x={n.x0} y={n.y0} width={(n.x1 ?? 0) - (n.x0 ?? 0)} height={Math.max(1, (n.y1 ?? 0) - (n.y0 ?? 0))} fill={PALETTE[(n.step - 1) % PALETTE.length]} />
            <text x={(n.x0 ?? 0) < width / 2 ? (n.x1 ?? 0) + 6 : (n.x0 ?? 0) - 6} y={((n.y0 ?? 0) + (n.y1 ?? 0)) / 2} dy="0.35em" font-size="12"
              text-anchor={(n.x0 ?? 0) < width / 2 ? 'start' : 'end'}>{`${n.name} (${n.value})`}</text>
          </g>
        ))}
      </svg>
      {open && <PersonsDialog projectId={props.projectId} title={open.title} url={open.url} onClose={() => setOpen(null)} />}
    </div>
  );
}
