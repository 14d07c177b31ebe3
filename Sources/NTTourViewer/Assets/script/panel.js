// The viewer's script, part 5 of 6: the panel over the view, and the copy buttons.
  // The panel over a tour's view (the ways on, the plan, the floors): open on a wide screen,
  // folded on a narrow or low one (a phone, a small embed), and as the visitor left it across moves.
  let panelOpen = !window.matchMedia("(max-width: 40rem), (max-height: 32rem)").matches;
  function setUpPanel() {
    const button = document.querySelector("body.tour main .around button.panel"), body = document.getElementById("panel");
    if (!button || !body) return;
    function show() {
      button.setAttribute("aria-expanded", String(panelOpen));
      body.hidden = !panelOpen;
    }
    button.classList.remove("hidden");
    button.addEventListener("click", function () {
      panelOpen = !panelOpen;
      show();
    });
    show();
  }
  setUpPanel();

  // A share link just made, and its embed snippet: a button copies each.
  document.querySelectorAll("button.copy").forEach(function (button) {
    const field = document.getElementById(button.dataset.copies);
    if (!field || !navigator.clipboard) return;
    button.classList.remove("hidden");
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(field.value).then(function () { button.textContent = "Copied"; }, function () { field.select(); });
    });
  });

