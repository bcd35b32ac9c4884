// Text fields of every request schema: bounded, and valid Unicode (JSON can carry lone
// surrogates, which later break URL encoding and header values).
import { z } from 'zod';
import { wellFormed } from '../domain/matchers.js';

export const text = (min: number, max: number) =>
  z.string().min(min).max(max).refine(wellFormed, 'not valid Unicode text (lone surrogate)');
