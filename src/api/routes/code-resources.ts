// Routes being implemented.
export {};
