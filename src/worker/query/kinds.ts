/**
 * Every query kind Quill answers, registered with src/worker/query/runners.ts. Importing this module registers them.
 */
import './insight-kinds.js';
import './hogql-kind.js';
import './events-query-kind.js';
import './actors-query-kind.js';
import './insight-actors-kind.js';
import './experiment-kind.js';
import './web-analytics-kinds.js';
