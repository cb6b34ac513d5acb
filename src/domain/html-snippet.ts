/**
 * PostHog's HTML snippet: the `<script>` a page pastes to load posthog-js from `<api_host>/static/array.js`, which
 * Quill serves (src/front/static-assets.ts). Until array.js arrives, `window.posthog` is a stub that queues calls
 * to the SDK's methods; array.js replays the queue (posthog-js `init_from_snippet`).
 *
 * The stub is PostHog's, as its app generates it (frontend/src/lib/components/JSSnippet.tsx): the same minified
 * loader, with the method list taken from the posthog-js it ships (every public method of its prototype). Quill
 * takes the list from the posthog-js it serves, when the console is built (src/console/snippet-methods.ts), so the
 * stub queues exactly what that array.js replays. Pure: the console and the README check share it.
 */

/** A JavaScript string literal in single quotes, safe inside a `<script>` element. */
function quoted(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/</g, '\\x3C').replace(/\n/g, '\\n')}'`;
}

/** The stub loader: PostHog's text, `methods` joined by spaces where its generator puts them. */
export function snippetLoader(methods: readonly string[]): string {
  return '!function(t,e){var o,n,p,r;e.__SV||(window.posthog && window.posthog.__loaded)||(window.posthog=e,e._i=[],e.init=function(i,s,a){function g(t,e){var o=e.split(".");2==o.length&&(t=t[o[0]],e=o[1]),t[e]=function(){t.push([e].concat(Array.prototype.slice.call(arguments,0)))}}(p=t.createElement("script")).type="text/javascript",p.crossOrigin="anonymous",p.async=!0,p.src=s.api_host.replace(".i.posthog.com","-assets.i.posthog.com")+"/static/array.js",(r=t.getElementsByTagName("script")[0]).parentNode.insertBefore(p,r);var u=e;for(void 0!==a?u=e[a]=[]:a="posthog",u.people=u.people||[],u.toString=function(t){var e="posthog";return"posthog"!==a&&(e+="."+a),t||(e+=" (stub)"),e},u.people.toString=function(){return u.toString(1)+".people (stub)"},o="'
    + methods.join(' ')
    + '".split(" "),n=0;n<o.length;n++)g(u,o[n]);e._i.push([i,s,a])},e.__SV=1)}(document,window.posthog||[]);';
}

export interface SnippetOptions {
  /** Where the SDK sends events and loads array.js from: this server's origin as the page's visitors reach it. */
  apiHost: string;
  /** The project API key (`phc_…`). */
  token: string;
  /** posthog-js's public methods (src/console/snippet-methods.ts). */
  methods: readonly string[];
}

/** The whole snippet, ready to paste into a page's `<head>`. */
export function htmlSnippet({ apiHost, token, methods }: SnippetOptions): string {
  return [
    '<script>',
    `    ${snippetLoader(methods)}`,
    `    posthog.init(${quoted(token)}, {`,
    `        api_host: ${quoted(apiHost)},`,
    "        person_profiles: 'identified_only', // or 'always' to create profiles for anonymous users as well",
    '    })',
    '</script>',
  ].join('\n');
}
