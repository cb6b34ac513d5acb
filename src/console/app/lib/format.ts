import { personDisplayName } from '../../../domain/person-display.js';

/** Display helpers. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return 'never';
  const s = Math.round((now - new Date(iso).getTime()) / 1000);
  if (s < 60) return `${Math.max(0, s)} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

export function valueText(v: unknown): string {
  if (v === null || v === undefined) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** A person's display name: e-mail or name property, else the first distinct id. */
/** A person's display name (src/domain/person-display.ts: the persons list orders by the same). */
export function personName(p: { name?: string; properties?: Record<string, unknown>; distinct_ids?: string[] }): string {
  return personDisplayName(p.properties, p.distinct_ids) ?? p.name ?? 'anonymous';
}

/** A chart value: thousands grouped, at most two decimals (`12,345`, `3.14`). */
export function numberText(v: number): string {
  return v.toLocaleString('en-US', { maximumFractionDigits: Number.isInteger(v) ? 0 : 2 });
}

/** An axis value in little room: `950`, `1.2k`, `3.4M`, `1.1B`. */
export function shortNumber(v: number): string {
  const a = Math.abs(v);
  for (const [size, suffix] of [[1e9, 'B'], [1e6, 'M'], [1e3, 'k']] as const) {
    if (a >= size) return `${Number((v / size).toFixed(a >= size * 10 ? 0 : 1))}${suffix}`;
  }
  return numberText(Number(v.toFixed(2)));
}

/** Bytes in the largest unit that keeps the number at or above one: `512 B`, `1.5 KB`, `2.3 GB` (powers of 1024). */
export function bytesText(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = bytes;
  let u = 0;
  while (Math.abs(v) >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} B` : `${v.toFixed(v >= 100 ? 0 : 1)} ${units[u]}`;
}

/** A wall-clock time (24-hour `14:05:09`) of a Unix time in seconds, in the browser's time zone. */
export function clockTime(seconds: number): string {
  const d = new Date(seconds * 1000);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}
