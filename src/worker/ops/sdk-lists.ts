/**
 * The lists posthog-js asks for with the project API key in `?token=`: surveys (`GET /api/surveys/`, on
 * `getSurveys()` and whenever surveys are on), early access features (`/api/early_access_features/`, on
 * `getEarlyAccessFeatures()`), web experiments (`/api/web_experiments/`, with `disable_web_experiments: false`) and
 * product tours (`/api/product_tours/`). Quill has none of these products yet, so each answers PostHog's shape with
 * an empty list, which posthog-js takes as "loaded, nothing to show": a 404 would make it log an error and ask
 * again on every call. The token is checked as on every public route (401 for a missing or unknown one).
 */
import { Errors } from '../../protocol/errors.js';
import { jsonText } from '../reply.js';
import { projectForToken } from './public-auth.js';
import type { OpHandler } from './types.js';

/** An op answering `body` once `?token=` names a project. */
function emptyList(body: Record<string, unknown[]>): OpHandler {
  const text = JSON.stringify(body);
  return (item, rt) => {
    const token = item.meta.query.token ?? item.meta.query.api_key;
    projectForToken(rt, typeof token === 'string' && token.trim() !== '' ? token.trim() : null, undefined, Errors.missingApiKey);
    return jsonText(200, text);
  };
}

export const surveys = emptyList({ surveys: [] });
export const earlyAccessFeatures = emptyList({ earlyAccessFeatures: [] });
export const webExperiments = emptyList({ experiments: [] });
export const productTours = emptyList({ product_tours: [] });
