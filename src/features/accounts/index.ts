// Organizations, API keys, users, members and sessions: the feature's only public surface.
export { createAccountsService, SCOPES, type AccountsService, type ApiKeyRecord, type OrganizationRecord } from './service.js';
export { slugProblem, RESERVED_SLUGS } from './slugs.js';
export { createUserService, normaliseEmail, checkRole, ROLES, type UserService, type UserRecord } from './users.js';
export { createSessionService, ADDRESS_BACKOFF_MS, LOGIN_WINDOW_MS, type SessionService, type SignedInUser, type TokenPair } from './sessions.js';
export { authRoutes } from './auth-routes.js';
export { browserSessionRoutes, csrfTokenFor, CSRF_COOKIE, CSRF_HEADER, REFRESH_COOKIE } from './browser-session-routes.js';
export { createMemberService, type MemberService, type MemberRecord } from './members.js';
export { organizationRoutes } from './organization-routes.js';
export { memberRoutes } from './member-routes.js';
