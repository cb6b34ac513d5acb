/** The dashboard pages, in one chunk loaded on first use (the grid, its tiles and the insight views they draw). */
export { DashboardPage } from './dashboard';
export { DashboardsPage } from './dashboards';
