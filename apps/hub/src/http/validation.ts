/**
 * The global `ValidationPipe` (class-validator DTOs for bodies and queries), whose refusals name
 * each property: a 400 problem with one issue per failed constraint, `field` the property's
 * path (`name`, `key.name`, `rules[0]`), `reason` class-validator's message.
 */
import { applyDecorators, BadRequestException, ValidationPipe } from '@nestjs/common';
import { isDateTime, RULE_FIELDS } from '@rampart/rules-core/rules/fields';
import { ValidateBy, ValidateIf, type ValidationError } from 'class-validator';
import type { ProblemIssue } from './problem-details.js';

/**
 * The date-time every API field takes: RFC 3339 with seconds and a zone (`2026-12-31T23:59:59Z`),
 * as the document's `format: date-time` plus {@link DATE_TIME_PATTERN} says.
 */
export const DATE_TIME_PATTERN = RULE_FIELDS.expiresAt.pattern;

export function IsDateTime(): PropertyDecorator {
  return ValidateBy({
    name: 'isDateTime',
    validator: {
      validate: (value) => typeof value === 'string' && isDateTime(value),
      defaultMessage: (args) =>
        `${args?.property} must be an RFC 3339 date-time such as 2026-12-31T23:59:59Z`,
    },
  });
}

/**
 * A property that may be absent, but not null: class-validator's `IsOptional` lets null through,
 * which the document (a string, a boolean) does not allow.
 */
export function Optional(): PropertyDecorator {
  return applyDecorators(ValidateIf((_, value) => value !== undefined));
}

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
