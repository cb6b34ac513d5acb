/**
 * Annotations on time-series charts: which of the project's annotations (`/annotations/`) a chart shows, and at
 * which bucket. A chart shows the project's and the organization's annotations, and those of its own insight; an
 * annotation sits on the bucket whose day is its date (the answer's `days`, in the project's time zone).
 */
export interface AnnotationItem {
  id: number;
  content: string;
  date_marker: string | null;
  scope: string;
  dashboard_item: number | null;
}

/** The day of an instant in a time zone (`YYYY-MM-DD`). */
export function dayIn(iso: string, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(new Date(iso));
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')}`;
}

export function markersFor(annotations: readonly AnnotationItem[], days: readonly string[], timeZone: string, insightId: number | null = null): { at: number; text: string }[] {
  const index = new Map(days.map((d, i) => [d.slice(0, 10), i]));
  const out: { at: number; text: string }[] = [];
  for (const a of annotations) {
    if (a.date_marker === null) continue;
    const mine = a.scope === 'project' || a.scope === 'organization' || (a.scope === 'dashboard_item' && insightId !== null && a.dashboard_item === insightId);
    if (!mine) continue;
    const at = index.get(dayIn(a.date_marker, timeZone));
    if (at !== undefined) out.push({ at, text: a.content });
  }
  return out;
}

const cache = new Map<number, { at: number; list: Promise<AnnotationItem[]> }>();

/**
 * The project's annotations, fetched once per project and kept for 30 s: a dashboard's tiles share one request. A
 * failed request draws none.
 */
export function loadAnnotations(projectId: number, get: (path: string) => Promise<{ results: AnnotationItem[] }>): Promise<AnnotationItem[]> {
  const had = cache.get(projectId);
  if (had && Date.now() - had.at < 30_000) return had.list;
  const list = get(`/api/projects/${projectId}/annotations/?limit=1000`).then((r) => r.results, () => []);
  cache.set(projectId, { at: Date.now(), list });
  return list;
}

/** Forgets the project's annotations (one was just added): the next chart asks again. */
export function forgetAnnotations(projectId: number): void {
  cache.delete(projectId);
}

/**
 * The instant an annotation made on a chart's day is stored at: that day's noon in the project's time zone, found
 * from noon UTC by whole hours (a zone is at most 14 hours away), so the chart puts it back on the same day.
 */
export function dateMarkerOf(day: string, timeZone: string): string {
  const noon = Date.parse(`${day.slice(0, 10)}T12:00:00Z`);
  for (let h = 0; h <= 14; h++) {
    for (const at of [noon - h * 3_600_000, noon + h * 3_600_000]) {
      if (dayIn(new Date(at).toISOString(), timeZone) === day.slice(0, 10)) return new Date(at).toISOString();
    }
  }
  return new Date(noon).toISOString();
}
