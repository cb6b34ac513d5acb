/**
 * Every query kind Quill answers, registered with src/worker/query/runners.ts. Importing this module registers them.
 */
import './insight-kinds.js';
import './insight-actors-kind.js';
