// Deployment workflow (being implemented).
export {};
