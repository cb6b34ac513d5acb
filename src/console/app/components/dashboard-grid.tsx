/**
 * The dashboard's 12-column grid (CSS grid, no grid library). A tile moves by dragging its handle and resizes by
 * dragging its corner, in column and row units, with pointer events; the handle also takes the keyboard (arrows
 * move, Shift+arrows resize). Other tiles make room as the drag goes (lib/dashboard-layout.ts); the new placement
 * is handed to `onCommit` once the pointer is released.
 */
import type { ComponentChildren } from 'preact';
import { useRef, useState } from 'preact/hooks';
import { COLUMNS, moveTile, type Cell, type Placement } from '../lib/dashboard-layout';

export const ROW_PX = 60;
export const GAP_PX = 12;

interface Drag {
  id: number;
  mode: 'move' | 'resize';
  startX: number;
  startY: number;
  cell: Cell;
  colPx: number;
}

export interface GridTile {
  id: number;
  title: string;
  render(handle: ComponentChildren): ComponentChildren;
}

/** Without `onCommit` the grid is read-only (a shared dashboard): no handles to move or resize tiles. */
export function DashboardGrid(props: { tiles: GridTile[]; placement: Placement; onCommit?(next: Placement): void }) {
  const grid = useRef<HTMLDivElement>(null);
  const drag = useRef<Drag | null>(null);
  const [preview, setPreview] = useState<Placement | null>(null);
  const shown = preview ?? props.placement;

  const begin = (id: number, mode: Drag['mode']) => (e: PointerEvent) => {
    if (e.button !== 0 || !grid.current) return;
    e.preventDefault();
    (e.currentTarget as Element).setPointerCapture(e.pointerId);
    const width = grid.current.getBoundingClientRect().width;
    drag.current = { id, mode, startX: e.clientX, startY: e.clientY, cell: props.placement.get(id)!, colPx: (width + GAP_PX) / COLUMNS };
  };
  const target = (d: Drag, e: PointerEvent): Cell => {
    const dx = Math.round((e.clientX - d.startX) / d.colPx);
    const dy = Math.round((e.clientY - d.startY) / (ROW_PX + GAP_PX));
    return d.mode === 'move' ? { ...d.cell, x: d.cell.x + dx, y: d.cell.y + dy } : { ...d.cell, w: d.cell.w + dx, h: d.cell.h + dy };
  };
  const move = (e: PointerEvent) => {
    const d = drag.current;
    if (d) setPreview(moveTile(props.placement, d.id, target(d, e)));
  };
  const end = (e: PointerEvent) => {
    const d = drag.current;
    if (!d) return;
    drag.current = null;
    const next = moveTile(props.placement, d.id, target(d, e));
    setPreview(null);
    props.onCommit?.(next);
  };
  const cancel = () => {
    drag.current = null;
    setPreview(null);
  };
  const key = (id: number) => (e: KeyboardEvent) => {
    const step: Record<string, [number, number]> = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    const d = step[e.key];
    const c = props.placement.get(id);
    if (!d || !c) return;
    e.preventDefault();
    // Moving up by one row may leave it where it was (the tile above is taller): jump past the neighbour instead.
    const to = e.shiftKey ? { ...c, w: c.w + d[0], h: c.h + d[1] } : { ...c, x: c.x + d[0], y: d[1] < 0 ? c.y - neighbourHeight(props.placement, id, c) : c.y + d[1] * (d[1] > 0 ? below(props.placement, id, c) : 1) };
    props.onCommit?.(moveTile(props.placement, id, to));
  };

  return (
    <div class="dashboard-grid" ref={grid} data-testid="dashboard-grid" style={{ gridAutoRows: `${ROW_PX}px`, gap: `${GAP_PX}px` }}>
      {props.tiles.map((t) => {
        const c = shown.get(t.id);
        if (!c) return null;
        const handle = props.onCommit && (
          <button type="button" class="ghost tile-handle" aria-label={`Move ${t.title} (arrow keys move, Shift+arrow keys resize)`}
            title="Drag to move; arrow keys move, Shift+arrow keys resize" data-testid="tile-handle"
            onPointerDown={begin(t.id, 'move')} onPointerMove={move} onPointerUp={end} onPointerCancel={cancel} onKeyDown={key(t.id)}>⠿</button>
        );
        return (
          <div key={t.id} class={preview && drag.current?.id === t.id ? 'grid-cell dragging' : 'grid-cell'} data-tile-id={t.id}
            data-x={c.x} data-y={c.y} data-w={c.w} data-h={c.h}
            style={{ gridColumn: `${c.x + 1} / span ${c.w}`, gridRow: `${c.y + 1} / span ${c.h}` }}>
            {t.render(handle)}
            {props.onCommit && (
              <span class="tile-resize" aria-hidden="true" title="Drag to resize" data-testid="tile-resize"
                onPointerDown={begin(t.id, 'resize')} onPointerMove={move} onPointerUp={end} onPointerCancel={cancel} />
            )}
          </div>
        );
      })}
    </div>
  );
}

/** How far up a tile has to go to pass the tile right above it (one row when nothing is above). */
function neighbourHeight(p: Placement, id: number, c: Cell): number {
  const above = [...p].filter(([o, d]) => o !== id && d.y + d.h <= c.y && d.x < c.x + c.w && c.x < d.x + d.w);
  if (above.length === 0) return 1;
  const nearest = above.reduce((a, b) => (b[1].y + b[1].h > a[1].y + a[1].h ? b : a));
  return c.y - nearest[1].y;
}

/** How far down a tile has to go to pass the tile right below it (one row when nothing is below). */
function below(p: Placement, id: number, c: Cell): number {
  const under = [...p].filter(([o, d]) => o !== id && d.y >= c.y + c.h && d.x < c.x + c.w && c.x < d.x + d.w);
  if (under.length === 0) return 1;
  const nearest = under.reduce((a, b) => (b[1].y < a[1].y ? b : a));
  return nearest[1].y + nearest[1].h - c.y - c.h + 1;
}
