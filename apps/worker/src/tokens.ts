/** Injection tokens of the worker's infrastructure (the libs' classes are plain, built by factories). */
export const WORKER_CONFIG = Symbol('WORKER_CONFIG');
export const ORM = Symbol('ORM');
export const REDIS = Symbol('REDIS');
export const STORAGE = Symbol('STORAGE');
