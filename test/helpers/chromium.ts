/** The system Chromium driver lives beside the console bench, which uses it too (bench/lib/chromium.ts). */
export { CHROMIUM_PATH, chromiumUnavailable, launchChromium, type Chromium } from '../../bench/lib/chromium.js';
