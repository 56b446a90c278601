// The truConsent SDK surface (contract §8): the feature's only public surface.
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../platform/db/types.js';
import type { Clock } from '../../platform/clock.js';
import { sdkSurfaceRoutes, type SdkSurfaceServices } from './routes.js';
import { createRightsCenterSettingsService } from './settings.js';

export { DEFAULT_RIGHTS_CENTER_SETTINGS, type RightsCenterSettingsService, type RightsCenterSettingsValue } from './settings.js';

export function registerSdkSurface(app: FastifyInstance, deps: { db: Database; clock: Clock } & Omit<SdkSurfaceServices, 'settings'>) {
  const settings = createRightsCenterSettingsService(deps);
  sdkSurfaceRoutes(app, { ...deps, settings });
  return settings;
}
