/**
 * The persons behind one data point, from the URL the analysis answered with (`persons_urls`, `people_url`,
 * `converted_people_url`, a path edge): trends, lifecycle, stickiness, funnels and paths answer
 * `{results: [{people}]}`, retention `{result: [{person}]}`; both are read here. Pages through `next`.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api, pathOf } from '../api';
import { personName } from '../lib/format';
import { ErrorNote, Modal } from './ui';

interface Person {
  id: string;
  uuid?: string;
  name?: string;
  distinct_ids: string[];
  properties: Record<string, unknown>;
}
interface PersonsAnswer {
  results?: { people: Person[]; count: number }[];
  result?: { person: Person }[];
  next: string | null;
}

const pathOfUrl = (url: string) => (url.startsWith('/') || url.startsWith('http') ? pathOf(url) : `/${url}`);

/**
 * `count`: how many persons the point stands for, when the analysis says so (a funnel step, a retention cell, a path
 * edge); without it the dialog counts what it loaded, with "+" while there are more pages.
 */
/** `children`: what the dialog offers besides the persons (a trends point: annotating its day). */
export function PersonsDialog(props: { projectId: number; title: string; summary?: string; count?: number; url: string | null | undefined; onClose(): void; children?: ComponentChildren }) {
  const [people, setPeople] = useState<Person[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [loaded, setLoaded] = useState(false);
  const load = (path: string) => api.get<PersonsAnswer>(path).then((a) => {
    const found = a.results ? a.results.flatMap((r) => r.people) : (a.result ?? []).map((r) => r.person);
    setPeople((prev) => [...prev, ...found]);
    setNext(a.next);
    setLoaded(true);
  }, setError);
  useEffect(() => {
    setPeople([]);
    setLoaded(false);
    if (props.url) load(pathOfUrl(props.url));
  }, [props.url]);
  return (
    <Modal title={props.title} onClose={props.onClose}>
      <div data-testid="persons-dialog">
        {props.summary && <p>{props.summary}</p>}
        {props.children}
        {(props.count !== undefined || loaded) && <p class="muted" data-testid="persons-count">{personsCountText(props.count ?? people.length, props.count === undefined && next !== null)}</p>}
        {!props.url && <p class="muted">No persons list for this point.</p>}
        <ErrorNote error={error} />
        <ul class="people">
          {people.map((p) => (
            <li key={p.uuid ?? p.id} data-testid="point-person">
              <Link href={`/project/${props.projectId}/persons/${p.uuid ?? p.id}`} data-testid="point-person-name">{personName(p)}</Link>
              {p.uuid && <> · <Link href={`/project/${props.projectId}/replay?person_uuid=${encodeURIComponent(p.uuid)}`} class="muted" data-testid="point-person-recordings">recordings</Link></>}
            </li>
          ))}
        </ul>
        {next && <button onClick={() => load(pathOf(next))}>More</button>}
      </div>
    </Modal>
  );
}

/** "1 person", "12 persons", "100+ persons" (more pages to load). */
export function personsCountText(n: number, more: boolean): string {
  return `${n}${more ? '+' : ''} ${n === 1 && !more ? 'person' : 'persons'}`;
}
