/**
 * The name a person is shown by, in the console and when the persons list is ordered by person: the first set
 * property among PostHog's display-name properties (its frontend's `PERSON_DEFAULT_DISPLAY_NAME_PROPERTIES`), else
 * the first distinct id. Pure: the console and the persons list share it, so a list ordered by person is in the
 * order of the names shown.
 */
export const DISPLAY_NAME_PROPERTIES = ['email', 'Email', '$email', 'name', 'Name', 'username', 'Username', 'UserName'] as const;

/** The display name, or null for a person with neither such a property nor a distinct id. */
export function personDisplayName(properties: Record<string, unknown> | undefined, distinctIds: readonly string[] | undefined): string | null {
  for (const key of DISPLAY_NAME_PROPERTIES) {
    const value = properties?.[key];
    if (value !== undefined && value !== null && value !== '') return typeof value === 'string' ? value : JSON.stringify(value);
  }
  return distinctIds?.[0] ?? null;
}
