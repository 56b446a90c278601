// The typed API client (openapi-fetch over the generated paths) with the session's token, and `call`,
// which turns a failed answer into an ApiError so pages handle one kind of failure.
import createClient from 'openapi-fetch';
import type { paths } from './openapi';
import { apiError } from './errors';
import { authorizedFetch } from './session';

export const api = createClient<paths>({ baseUrl: window.location.origin, fetch: authorizedFetch });

/** The data of a successful answer, or the ApiError of a failed one. */
export async function call<T>(pending: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  // openapi-fetch has read the body already: `error` holds it parsed.
  const { data, error, response } = await pending;
  if (!response.ok) throw apiError(response, error);
  return data as T;
}
