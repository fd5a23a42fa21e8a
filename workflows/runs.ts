// Run workflows (being implemented).
export {};
