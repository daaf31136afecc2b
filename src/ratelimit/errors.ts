// The rate limit service's error wire format: text/plain bodies, as the reference's Go HTTP server answers.
import { errorHandler, HttpError } from "../shared/http/errors";

export const ratelimitErrorResponse = errorHandler("ratelimit", {
  expected: (c, error) => c.text(error.message, error.status as 400, error.headers),
  failure: (c, message) => c.text(message, 500),
});

/** A configuration set the loader refuses; the message names the file and the problem. Nothing was written. */
export class ConfigRefused extends HttpError {
  override name = "ConfigRefused";
  constructor(message: string) {
    super(400, message);
  }
}

/** A change to one file raced another change: it was validated against files that are no longer the set. */
export class ConfigSetChanged extends HttpError {
  override name = "ConfigSetChanged";
  constructor() {
    super(409, "the configuration files changed while this request was applied; nothing was written: send it again");
  }
}

/** DELETE of a name that is no uploaded file. */
export class UploadedFileNotFound extends HttpError {
  override name = "UploadedFileNotFound";
  constructor(name: string) {
    super(404, `no uploaded file named ${name}`);
  }
}

/** DELETE of a name only the bundled set has: bundled files change with config/ and a deploy, not over HTTP. */
export class BundledFileNotDeletable extends HttpError {
  override name = "BundledFileNotDeletable";
  constructor(name: string) {
    super(
      409,
      `${name} is a bundled file, not an uploaded one: upload a file of that name to replace it, ` +
        "or remove it from config/ and deploy again to drop it",
    );
  }
}
