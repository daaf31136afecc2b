// Converts between the generated messages of rls.proto and the core's request/response model, so the Connect,
// gRPC-Web and raw application/proto paths decide exactly like POST /json (same request, same answer).
import type { MessageInitShape } from "@bufbuild/protobuf";
import { descriptorCountProblem, entryCountProblem, type RequestLimits } from "./core/limits";
import { err, ok, type Result } from "./core/result";
import type { RateLimitDescriptor, RateLimitRequest, RateLimitResponse } from "./core/types";
import { unitFromNumber } from "./core/units";
import {
  RateLimitResponse_Code,
  RateLimitResponse_RateLimit_Unit,
  type RateLimitRequest as ProtoRateLimitRequest,
  type RateLimitResponseSchema,
} from "./gen/envoy/service/ratelimit/v3/rls_pb";

const MAX_EXACT_HITS = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * Decodes a request message into the core's model. Enum numbers map like the /json codec's (an override unit
 * the core does not know becomes UNKNOWN, which the core refuses with its own message). The descriptor and entry
 * counts are refused with /json's messages.
 * @returns the request, or a message naming the field that cannot be represented or the limit it passes.
 */
export function requestFromProto(
  message: ProtoRateLimitRequest,
  limits: RequestLimits,
): Result<RateLimitRequest, string> {
  const tooMany = descriptorCountProblem(message.descriptors.length, limits);
  if (tooMany !== undefined) return err(tooMany);
  const descriptors: RateLimitDescriptor[] = [];
  for (const [index, given] of message.descriptors.entries()) {
    const tooManyEntries = entryCountProblem(index, given.entries.length, limits);
    if (tooManyEntries !== undefined) return err(tooManyEntries);
    const descriptor: RateLimitDescriptor = { entries: given.entries.map(({ key, value }) => ({ key, value })) };
    if (given.limit !== undefined) {
      const unit = unitFromNumber(given.limit.unit) ?? "UNKNOWN";
      descriptor.limit = { requestsPerUnit: given.limit.requestsPerUnit, unit };
    }
    if (given.hitsAddend !== undefined) {
      // /json refuses the same values: counters are JavaScript numbers.
      if (given.hitsAddend > MAX_EXACT_HITS) {
        return err(`descriptor ${index}: hits_addend ${given.hitsAddend} is larger than 2^53 - 1`);
      }
      descriptor.hitsAddend = Number(given.hitsAddend);
    }
    descriptors.push(descriptor);
  }
  return ok({ domain: message.domain, descriptors, hitsAddend: message.hitsAddend });
}

/** Encodes a decision as the response message; zero values stay implicit, as in proto3 JSON of /json. */
export function responseToProto(response: RateLimitResponse): MessageInitShape<typeof RateLimitResponseSchema> {
  return {
    overallCode: RateLimitResponse_Code[response.overallCode],
    statuses: response.statuses.map((status) => ({
      code: RateLimitResponse_Code[status.code],
      currentLimit: status.currentLimit && {
        name: status.currentLimit.name ?? "",
        requestsPerUnit: status.currentLimit.requestsPerUnit,
        unit: RateLimitResponse_RateLimit_Unit[status.currentLimit.unit],
      },
      limitRemaining: status.limitRemaining,
      durationUntilReset:
        status.durationUntilResetSeconds === undefined
          ? undefined
          : { seconds: BigInt(status.durationUntilResetSeconds) },
    })),
    responseHeadersToAdd: response.responseHeadersToAdd.map(({ key, value }) => ({ key, value })),
  };
}
