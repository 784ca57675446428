import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { ApiError, type FieldErrors } from '#libs/core';

function collect(errors: ValidationError[], parent: string, out: FieldErrors): FieldErrors {
  for (const e of errors) {
    const path = /^\d+$/.test(e.property) ? `${parent}[${e.property}]` : parent ? `${parent}.${e.property}` : e.property;
    if (e.constraints) {
      out[path] = Object.entries(e.constraints).map(([rule, msg]) =>
        rule === 'whitelistValidation' ? `Unknown field "${path}"` : msg,
      );
    }
    if (e.children?.length) collect(e.children, path, out);
  }
  return out;
}

/** DTO validation: unknown fields refused, values checked, failures as 400 INVALID_REQUEST with `errors` by path. */
export function validationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => {
      const fields = collect(errors, '', {});
      return new ApiError('INVALID_REQUEST', `Invalid request: ${Object.entries(fields).map(([k, v]) => `${k}: ${v[0]}`).join('; ')}`, { errors: fields });
    },
  });
}
