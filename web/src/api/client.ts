// The dashboard's API client: the published client package (clients/typescript, @assent/client) over the
// session's token, and `call`, which turns a failed answer into an ApiError so pages handle one kind of
// failure. Retries are off: a page shows a failure (and a 429's wait) to the person, who decides.
import { createAssentClient } from '../../../clients/typescript/src/index';
import { apiError } from './errors';
import { authorizedFetch } from './session';

export const api = createAssentClient({ baseUrl: window.location.origin, fetch: authorizedFetch, retries: 0 });

/** The data of a successful answer, or the ApiError of a failed one. */
export async function call<T>(pending: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  // openapi-fetch has read the body already: `error` holds it parsed.
  const { data, error, response } = await pending;
  if (!response.ok) throw apiError(response, error);
  return data as T;
}
