import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { ValidateBy, ValidateIf, type ValidationOptions } from 'class-validator';
import { ApiError, validationFailed, type FieldErrors } from '#libs/core';

function collect(errors: ValidationError[], parent: string, out: FieldErrors): FieldErrors {
  for (const e of errors) {
    const path = /^\d+$/.test(e.property) ? `${parent}[${e.property}]` : parent ? `${parent}.${e.property}` : e.property;
    if (e.constraints) {
      out[path] = Object.entries(e.constraints).map(([rule, msg]) => (rule === 'whitelistValidation' ? `Unknown field "${path}"` : msg));
    }
    if (e.children?.length) collect(e.children, path, out);
  }
  return out;
}

/** What the pipe's exception factory hands back to `transform`, which knows where the value came from. */
class BrokenRules {
  constructor(readonly errors: FieldErrors) {}
}

const isJsonObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value);

/**
 * The global pipe of DTO-typed bodies and queries (decisions.md "Envelope and errors", §7):
 * - a body that is JSON but not an object (an array, a string, a number, null): 400 INVALID_REQUEST;
 * - values that break a DTO's rules, and unknown fields: 422 VALIDATION_FAILED with `errors` by path
 *   (`headers[20]`, `merge[0].find`; a query's paths start with `query.`).
 * An absent body (none sent, or an empty one) is checked as `{}`: its required fields are named.
 */
export class ApiValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      validationError: { target: false, value: false },
      exceptionFactory: (errors) => new BrokenRules(collect(errors, '', {})),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const typed = this.toValidate(metadata);
    if (typed && metadata.type === 'body' && value !== undefined && !isJsonObject(value)) {
      throw new ApiError('INVALID_REQUEST', 'The body must be a JSON object');
    }
    try {
      return await super.transform(value, metadata);
    } catch (err) {
      if (!(err instanceof BrokenRules)) throw err;
      const prefix = metadata.type === 'query' ? 'query.' : '';
      throw validationFailed(Object.fromEntries(Object.entries(err.errors).map(([path, messages]) => [prefix + path, messages])));
    }
  }
}

export function validationPipe(): ValidationPipe {
  return new ApiValidationPipe();
}

/** The field may be left out, but not sent as null (class-validator's IsOptional lets null through). */
export const MayOmit = () => ValidateIf((_object: object, value: unknown) => value !== undefined);

/** A DTO rule backed by a library predicate, so the rule is written once (the lib) and applied here. */
export function Satisfies(name: string, test: (value: unknown) => boolean, message: string, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy({ name, validator: { validate: (value) => test(value), defaultMessage: () => message } }, options);
}

/** At most `max` characters once serialised as JSON (free-form objects such as a render's `metadata`). */
export function MaxJsonLength(max: number, options?: ValidationOptions): PropertyDecorator {
  return Satisfies('maxJsonLength', (value) => JSON.stringify(value ?? null).length <= max, `must be at most ${max} characters of JSON`, options);
}
