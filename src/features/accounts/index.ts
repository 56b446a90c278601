// Organizations and API keys: the feature's only public surface.
export { createAccountsService, SCOPES, type AccountsService, type ApiKeyRecord, type OrganizationRecord } from './service.js';
export { slugProblem, RESERVED_SLUGS } from './slugs.js';
export { createUserService, normaliseEmail, checkRole, ROLES, type UserService, type UserRecord } from './users.js';
export { createSessionService, LOGIN_WINDOW_MS, type SessionService, type TokenPair } from './sessions.js';
export { authRoutes } from './auth-routes.js';
