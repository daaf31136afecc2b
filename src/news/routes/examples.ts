// The news API's request examples in the OpenAPI document: an editor signs up (an admin, so that the article examples
// may run), edits the profile, adds and changes an article, then changes the password, in the order Swagger UI's
// "Try it out" takes them on a fresh `npm start` (test/integration/openapi-examples.test.ts sends each one).
import type { z } from "../../shared/zod";
import type { CreateArticle, CreateUser, UpdateArticle, UpdatePassword, UpdateUser } from "./schemas";

export const signUpExample: z.input<typeof CreateUser> = {
  email: "alex.morgan@example.com",
  password: "correct-horse-battery",
  name: "Alex Morgan",
  role: "admin",
};

export const updateUserExample: z.input<typeof UpdateUser> = {
  name: "Alex Morgan (news desk)",
  picture: "https://www.example.com/avatars/alex-morgan.png",
};

/** Ends the sessions issued before it: the last step of the tour. */
export const changePasswordExample: z.input<typeof UpdatePassword> = { password: "staple-battery-horse-correct" };

export const createArticleExample: z.input<typeof CreateArticle> = {
  title: "BHP lifts copper output as iron ore shipments hold steady",
  url: "https://www.example.com/markets/bhp-copper-output",
  abstract: "BHP Group raised its copper production forecast for the year while iron ore shipments held steady.",
  source: "example-wire",
  publishedAt: "2026-07-01T09:30:00Z",
  companies: ["BHP"],
};

export const updateArticleExample: z.input<typeof UpdateArticle> = {
  abstract: "BHP Group raised its copper production forecast; Rio Tinto reported steady Pilbara shipments.",
  companies: ["BHP", "RIO"],
};
