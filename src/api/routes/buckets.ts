// Buckets and assets: implemented in the buckets work package.
export {};
