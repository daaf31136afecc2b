// The soak's control Worker: no bindings, no state, one fixed answer.
export default {
  fetch() {
    return new Response("ok");
  },
};
