/**
 * A page drawn for a share link (/shared/<token>) rather than for a signed-in user: the charts read the project's
 * time zone from here, ask their queries through the link, and open nothing that needs the private API (persons
 * behind a point, annotations).
 */
import { createContext } from 'preact';

export interface SharedView {
  timezone: string;
  /** A query of the shared web analytics page, answered through the link (`POST /api/shared/<token>/query/`). */
  runQuery<T = unknown>(query: object): Promise<T>;
}

export const SharedViewContext = createContext<SharedView | null>(null);
