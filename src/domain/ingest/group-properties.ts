import type { GroupTypes } from '../model.js';

/**
 * `$groups: {company: "acme"}` → `$group_0: "acme"`, indexes from the project's group types (as PostHog's
 * ingestion does): what the apply stores and the ClickHouse export sends. Mutates `props`.
 */
export function addGroupIndexes(props: Record<string, unknown>, groupTypes: GroupTypes): void {
  const groups = props.$groups;
  if (!groups || typeof groups !== 'object' || Array.isArray(groups)) return;
  for (const [type, key] of Object.entries(groups as Record<string, unknown>)) {
    const index = groupTypes[type];
    if (index !== undefined && key !== null && key !== undefined) props[`$group_${index}`] = String(key);
  }
}
