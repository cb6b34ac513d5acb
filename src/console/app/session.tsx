/** Who is signed in (`/api/users/@me/`) and the projects they can open; shared by every page through context. */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';

export interface Project {
  id: number;
  name: string;
  api_token: string;
  timezone: string;
}

export interface Me {
  id: number;
  email: string;
  first_name: string;
  organization: { id: string; name: string; membership_level: number };
  team: Project | null;
  csrf_token?: string;
}

export interface Session {
  me: Me;
  projects: Project[];
  signOut(): Promise<void>;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a signed-in page');
  return s;
}
