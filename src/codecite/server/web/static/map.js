// codecite's Map view: zoom the server-drawn SVG; hide the landing map once a question
// is asked. No library, no build step.
(function () {
  "use strict";

  //: The smallest zoom the page opens at: labels stay readable on a phone (the picture
  //: then scrolls inside its frame, never the page).
  var READABLE = 0.7;

  function setUp(map) {
    var frame = map.querySelector(".map-frame");
    var svg = frame && frame.querySelector("svg");
    if (!svg) return;
    var box = svg.viewBox.baseVal;
    var width = box.width, height = box.height;
    var scale = 1;

    function fit() {
      var room = frame.clientWidth - 2;
      return Math.min(1, room / width);
    }

    function apply(next) {
      scale = Math.max(0.2, Math.min(3, next));
      svg.setAttribute("width", String(Math.round(width * scale)));
      svg.setAttribute("height", String(Math.round(height * scale)));
      map.dataset.zoom = scale.toFixed(2);
    }

    apply(Math.max(fit(), Math.min(1, READABLE)));
    centreOnLargest();

    function centreOnLargest() {  // a picture wider than its frame opens at its main part
      if (svg.getBoundingClientRect().width <= frame.clientWidth) return;
      var largest = null;
      Array.prototype.forEach.call(svg.querySelectorAll("g.box"), function (g) {
        if (!largest || Number(g.dataset.lines) > Number(largest.dataset.lines)) largest = g;
      });
      var rect = largest && largest.querySelector("rect");
      if (!rect) return;
      var b = rect.getBBox();
      frame.scrollLeft = Math.max(0, (b.x + b.width / 2) * scale - frame.clientWidth / 2);
    }
    Array.prototype.forEach.call(map.querySelectorAll("button[data-zoom]"), function (button) {
      button.addEventListener("click", function () {
        var how = button.dataset.zoom;
        apply(how === "in" ? scale * 1.25 : how === "out" ? scale / 1.25 : fit());
      });
    });
    frame.addEventListener("keydown", function (event) {
      if (event.key === "+" || event.key === "=") apply(scale * 1.25);
      else if (event.key === "-") apply(scale / 1.25);
      else return;
      event.preventDefault();
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll(".map"), setUp);
    var landing = document.getElementById("landing-map");
    var answer = document.getElementById("answer");
    if (landing && answer && window.MutationObserver) {
      new MutationObserver(function () {
        if (answer.getAttribute("aria-busy") === "true") landing.hidden = true;
      }).observe(answer, { attributes: true, attributeFilter: ["aria-busy"] });
    }
  });
})();
