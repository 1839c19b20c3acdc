// The HTTP API's default route: any method and path no route matches → 404 {error} (not API Gateway's own
// {"message":"Not Found"}), so every error of the API has the same shape.
import { scoped } from '../http/scoped';
import { NotFoundError } from '../shared/errors';

export const handler = scoped('public', (_scope, _input, req) => {
  const { method, path } = req.event.requestContext.http;
  return Promise.reject(new NotFoundError(`No route for ${method} ${path.slice(0, 200)}`));
});
