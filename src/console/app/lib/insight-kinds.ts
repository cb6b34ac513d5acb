/**
 * The insight kinds the console knows. Each names the analysis endpoint it needs; a kind whose endpoint Quill does
 * not serve yet is listed as not available, so adding one is: the endpoint, then its page, then `available: true`.
 */
export interface InsightKind {
  kind: string;
  /** PostHog's `filters.insight` value. */
  insight: string;
  title: string;
  description: string;
  endpoint: string;
  available: boolean;
}

export const INSIGHT_KINDS: InsightKind[] = [
  { kind: 'trends', insight: 'TRENDS', title: 'Trends', description: 'Events or users over time, as lines or bars, with breakdowns.', endpoint: 'insights/trend/', available: true },
  { kind: 'funnels', insight: 'FUNNELS', title: 'Funnels', description: 'Step-by-step conversion, with conversion rates and times.', endpoint: 'insights/funnel/', available: false },
  { kind: 'retention', insight: 'RETENTION', title: 'Retention', description: 'How many come back, as a cohort grid.', endpoint: 'insights/retention/', available: false },
  { kind: 'lifecycle', insight: 'LIFECYCLE', title: 'Lifecycle', description: 'New, returning, resurrecting and dormant users, as stacked bars.', endpoint: 'insights/trend/?shown_as=Lifecycle', available: false },
  { kind: 'stickiness', insight: 'STICKINESS', title: 'Stickiness', description: 'On how many days of a period users come back.', endpoint: 'insights/trend/?shown_as=Stickiness', available: false },
  { kind: 'paths', insight: 'PATHS', title: 'Paths', description: 'The routes users take, as a flow diagram.', endpoint: 'insights/path/', available: false },
];

export const kindOf = (insight: unknown): InsightKind | undefined => INSIGHT_KINDS.find((k) => k.insight === insight);
