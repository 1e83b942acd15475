/**
 * The global `ValidationPipe` (class-validator DTOs for bodies and queries), whose refusals name
 * each property: a 400 problem with one issue per failed constraint, `field` the property's
 * path (`name`, `key.name`, `rules[0]`), `reason` class-validator's message.
 */
import { BadRequestException, ValidationPipe } from '@nestjs/common';
import type { ValidationError } from 'class-validator';
import type { ProblemIssue } from './problem-details.js';

export function validationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    exceptionFactory: (errors) => invalidInput(validationIssues(errors)),
  });
}

/** 400 listing every issue; `detail` joins their reasons. */
export function invalidInput(issues: readonly ProblemIssue[]): BadRequestException {
  return new BadRequestException({
    message: issues.map((i) => i.reason).join('; ') || 'the request is invalid',
    issues,
  });
}

/** Flattens class-validator's tree of errors into issues, one per failed constraint. */
export function validationIssues(errors: readonly ValidationError[], parent = ''): ProblemIssue[] {
  return errors.flatMap((error) => {
    const field = /^\d+$/.test(error.property)
      ? `${parent}[${error.property}]`
      : parent
        ? `${parent}.${error.property}`
        : error.property;
    const own = Object.values(error.constraints ?? {}).map((reason) => ({ field, reason }));
    return [...own, ...validationIssues(error.children ?? [], field)];
  });
}
