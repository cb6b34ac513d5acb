/**
 * The person properties timeline (analytics.md §8.4): from a person's events in time order, each with the person's
 * properties as they were at that event (persons on events), the points where the crucial properties changed.
 */
export interface TimelineEvent {
  ts: number;
  properties: Record<string, unknown>;
}

export interface TimelinePoint {
  timestamp: string;
  properties: Record<string, unknown>;
  relevant_event_count: number;
}

/** A point at the first event and wherever the tuple of crucial values differs from the previous event's. */
export function propertiesTimeline(events: readonly TimelineEvent[], crucial: readonly string[]): TimelinePoint[] {
  const points: TimelinePoint[] = [];
  let previous: string | null = null;
  for (const e of events) {
    const tuple = JSON.stringify(crucial.map((k) => (Object.hasOwn(e.properties, k) ? e.properties[k] : null)));
    if (tuple !== previous) {
      points.push({ timestamp: new Date(e.ts).toISOString(), properties: e.properties, relevant_event_count: 0 });
      previous = tuple;
    }
    points[points.length - 1]!.relevant_event_count++;
  }
  return points;
}
