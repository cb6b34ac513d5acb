/**
 * `GET /array/:token/config` (JSON) and `/array/:token/config.js` (the script form posthog-js can load): the
 * project's remote config, the same fields decide sends (posthog-js's modules as the project's settings switch them).
 */
import { sdkSettingsOf } from '../../domain/sdk-settings.js';
import { Errors } from '../../protocol/errors.js';
import { json } from '../reply.js';
import type { WorkerRuntime } from '../runtime.js';
import { configFields } from './decide.js';
import { recordingSettingsOf, sessionRecordingConfig } from '../../domain/recordings/settings.js';
import type { OpHandler } from './types.js';

function configFor(rt: WorkerRuntime, token: string): Record<string, unknown> {
  const project = rt.cache.projectByToken(token);
  if (!project) throw Errors.invalidApiKey();
  const set = rt.cache.flagSet(project.id);
  const { config: _legacy, editorParams: _e, toolbarParams: _t, isAuthenticated: _a, ...fields } = configFields(sdkSettingsOf(project.sdk_settings), set.flags.some((f) => f.active));
  // Recording is per project (off by default): posthog-js starts its recorder from this member.
  return { token, ...fields, sessionRecording: sessionRecordingConfig(recordingSettingsOf(project.recordings)) };
}

export const remoteConfig: OpHandler = (item, rt) => json(200, configFor(rt, item.params.token ?? ''));

export const remoteConfigScript: OpHandler = (item, rt) => {
  const token = item.params.token ?? '';
  const config = configFor(rt, token);
  const script = `(function(){window._POSTHOG_REMOTE_CONFIG=window._POSTHOG_REMOTE_CONFIG||{};` +
    `window._POSTHOG_REMOTE_CONFIG[${JSON.stringify(token)}]={config:${JSON.stringify(config)},siteApps:[]};})();`;
  return { status: 200, body: script, contentType: 'application/javascript' };
};
