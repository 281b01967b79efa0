// What an admin page says to a person who is not an instance administrator (the API refused them).
export function AdminRefused() {
  return <p>Only instance administrators use this area. Ask one of them if you need something changed here.</p>;
}
