/** The RepError `fn` throws (failing the test when it returns, or throws anything else). */
import { expect } from 'vitest';
import { RepError } from '@kiln/runtime';

export function refusal(fn: () => unknown): RepError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(RepError);
    return e as RepError;
  }
  throw new Error('expected a refusal');
}
