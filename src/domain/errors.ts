// ApiError: the one error type that becomes a client answer. Anything else thrown is a
// programmer or infrastructure error and becomes a 500 whose detail stays in the log.

export type FieldErrors = Record<string, string[]>;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Extra fields merged into the `data` of the fail envelope (public). */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  static validation(errors: FieldErrors): ApiError {
    return new ApiError(400, 'Validation errors', { errors });
  }

  static field(field: string, problem: string): ApiError {
    return ApiError.validation({ [field]: [problem] });
  }

  static unauthorized(): ApiError {
    return new ApiError(401, 'Unauthorized');
  }

  static notFound(what: string, id: string | number, field = 'tokenId'): ApiError {
    const message = `No ${what} with id: ${id}`;
    return new ApiError(404, message, { [field]: message });
  }
}

/** Collects field problems so one answer can list all of them. */
export class FieldErrorList {
  readonly errors: FieldErrors = Object.create(null) as FieldErrors;
  add(field: string, problem: string): void {
    this.errors[field] ??= [];
    this.errors[field].push(problem);
  }
  get empty(): boolean {
    return Object.keys(this.errors).length === 0;
  }
  throwIfAny(): void {
    if (!this.empty) throw ApiError.validation(this.errors);
  }
}
