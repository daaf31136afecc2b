// The rate limit service's error wire format: text/plain bodies, as the reference's Go HTTP server answers.
import { errorHandler } from "../shared/http/errors";

export const ratelimitErrorResponse = errorHandler("ratelimit", {
  expected: (c, error) => c.text(error.message, error.status as 400, error.headers),
  failure: (c, message) => c.text(message, 500),
});
