/**
 * The persons API (`/api/projects/:project_id/persons/…`): the operations the route table names, implemented in
 * src/worker/ops/persons/ (view and lookup, list filters, writes, actions, activity, metadata).
 */
export { updatePersonProperty, deletePersonProperty, splitPerson } from './persons/actions.js';
export { allPersonsActivity, personActivity } from './persons/activity.js';
export { createPerson, deletePerson, retrievePerson, updatePerson } from './persons/crud.js';
export { deletePersonEventsHandler, DELETE_PERSON_EVENTS } from './persons/delete-events.js';
export { listPersons } from './persons/list.js';
export { cohortsOfPerson, personPropertyKeys, personPropertyValues } from './persons/metadata.js';
