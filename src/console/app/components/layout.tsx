/** The signed-in shell: navigation, project switcher, the user and sign-out. */
import type { ComponentChildren } from 'preact';
import { Link, useLocation } from 'wouter-preact';
import { useSession } from '../session';

export const NAV: [string, string][] = [
  ['events', 'Live events'],
  ['web', 'Web analytics'],
  ['persons', 'Persons'],
  ['flags', 'Feature flags'],
  ['cohorts', 'Cohorts'],
  ['experiments', 'Experiments'],
  ['definitions', 'Event definitions'],
  ['insights', 'Insights'],
  ['sql', 'SQL'],
  ['dashboard', 'Dashboards'],
  ['replay', 'Recordings'],
  ['health', 'Health'],
  ['settings', 'Settings'],
];

export function Layout(props: { projectId: number; children: ComponentChildren }) {
  const session = useSession();
  const [location, navigate] = useLocation();
  const section = location.split('/')[3] ?? '';
  return (
    <div class="shell">
      <aside class="nav">
        <div class="brand">Quill</div>
        {session.projects.length > 1 ? (
          <select aria-label="project" class="project-switch" value={props.projectId} onChange={(e) => navigate(`/project/${e.currentTarget.value}/${section || 'events'}`)}>
            {session.projects.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
          </select>
        ) : (
          <div class="project-name">{session.projects.find((p) => p.id === props.projectId)?.name ?? `Project ${props.projectId}`}</div>
        )}
        <nav>
          {NAV.map(([path, label]) => (
            <Link key={path} href={`/project/${props.projectId}/${path}`} class={section === path ? 'active' : ''}>{label}</Link>
          ))}
        </nav>
        <div class="me">
          <span title={session.me.organization.name}>{session.me.email}</span>
          <Link href="/account">Account</Link>
          <button class="ghost" onClick={() => session.signOut()}>Sign out</button>
        </div>
      </aside>
      <main class="content">{props.children}</main>
    </div>
  );
}
