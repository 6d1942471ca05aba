// codecite's web page: streams answers, keyboard keys, copy buttons. No build step.
(function () {
  "use strict";

  function csrfToken() {
    var meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute("content") : "";
  }

  var running = null; // the AbortController of the answer being streamed

  function stop() {
    if (running) {
      running.abort();
      running = null;
    }
  }

  // On a phone the form fills the first screen: bring the answer to the top.
  function showOnPhone(area) {
    if (window.matchMedia && window.matchMedia("(max-width: 600px)").matches) {
      area.scrollIntoView({ block: "start" });
    }
  }

  function ask(form) {
    var area = document.getElementById("answer");
    var status = document.getElementById("answer-status");
    var stream = document.getElementById("answer-stream");
    var rendered = document.getElementById("answer-rendered");
    var question = form.querySelector("[name=q]").value.trim();
    var repos = Array.prototype.map.call(
      form.querySelectorAll("input[name=repos]:checked"),
      function (box) { return box.value; }
    );
    if (!question) return;
    var limit = Number(form.querySelector("[name=q]").dataset.max || 0);
    if (limit && question.length > limit) {  // never cut: say so, the visitor shortens it
      status.className = "status error";
      status.textContent = "This question is " + question.length.toLocaleString("en") +
        " characters; the server takes at most " + limit.toLocaleString("en") +
        ". Shorten it (keep the error message and the last lines of the traceback).";
      return;
    }
    stop();
    var controller = new AbortController();
    running = controller;
    rendered.textContent = "";
    stream.textContent = "";
    stream.hidden = true;
    status.className = "status";
    status.textContent = "Looking through the code…";
    area.setAttribute("aria-busy", "true");
    showOnPhone(area);

    function fail(message) {
      status.className = "status error";
      status.setAttribute("role", "alert");
      status.textContent = message;
      stream.hidden = true;
      area.setAttribute("aria-busy", "false");
    }

    function handle(raw) {
      var name = "";
      var data = [];
      raw.split("\n").forEach(function (line) {
        if (line.indexOf("event: ") === 0) name = line.slice(7);
        else if (line.indexOf("data: ") === 0) data.push(line.slice(6));
      });
      if (!name || !data.length) return;
      var payload = JSON.parse(data.join("\n"));
      if (name === "token") {
        status.textContent = "Answering…";
        if (stream.hidden) showOnPhone(area);
        stream.hidden = false;
        stream.textContent += payload.text;
      } else if (name === "result") {
        rendered.innerHTML = payload.html; // server-rendered and escaped; CSP blocks scripts
        stream.hidden = true;
        stream.textContent = "";
        status.textContent = "";
        area.setAttribute("aria-busy", "false");
        showOnPhone(area); // now that the page is long enough to bring it up
        centreHoods(rendered);
      } else if (name === "error") {
        fail("codecite could not answer: " + (payload.error ? payload.error.message : "error"));
      }
    }

    fetch("/web/ask", {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
        "X-CSRF-Token": csrfToken()
      },
      body: JSON.stringify({ question: question, repos: repos }),
      signal: controller.signal
    }).then(function (response) {
      if (!response.ok) {
        return response.json().then(
          function (body) { fail(body && body.error ? body.error.message : response.statusText); },
          function () { fail("codecite could not answer (HTTP " + response.status + ")"); }
        );
      }
      var reader = response.body.getReader();
      var decoder = new TextDecoder();
      var buffer = "";
      function pump() {
        return reader.read().then(function (chunk) {
          if (chunk.done) {
            if (running === controller) running = null;
            area.setAttribute("aria-busy", "false");
            return;
          }
          buffer += decoder.decode(chunk.value, { stream: true });
          var cut;
          while ((cut = buffer.indexOf("\n\n")) >= 0) {
            handle(buffer.slice(0, cut));
            buffer = buffer.slice(cut + 2);
          }
          return pump();
        });
      }
      return pump();
    }).catch(function (error) {
      if (error && error.name === "AbortError") {
        status.className = "status";
        status.textContent = "Stopped.";
        area.setAttribute("aria-busy", "false");
      } else {
        fail("codecite could not be reached: " + error);
      }
    });
  }

  function countCharacters(box) {
    var count = document.getElementById("q-count");
    var limit = Number(box.dataset.max || 0);
    if (!count || !limit) return;
    var n = box.value.length;
    var over = n > limit;
    count.className = over ? "hint warn" : "hint";
    count.textContent = n > 0.8 * limit ? n.toLocaleString("en") + " / " +
      limit.toLocaleString("en") + " characters" + (over ? ": too long, shorten it" : "") : "";
  }

  function setUpQuestionBox(form, multiline) {
    var box = form.querySelector("[name=q]");
    box.addEventListener("input", function () { countCharacters(box); });
    box.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && multiline && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        if (box.value.trim()) form.requestSubmit();
      } else if (event.key === "Escape") {
        event.preventDefault();
        stop();
        box.value = "";
      }
    });
  }

  // A symbol's picture may be wider than its frame (a phone, the answer's column): it
  // scrolls inside the frame, opened with the symbol itself in the middle.
  function centreHoods(root) {
    Array.prototype.forEach.call(root.querySelectorAll(".hood-frame"), function (frame) {
      var symbol = frame.querySelector("g.node.self rect");
      if (!symbol) return;
      var box = symbol.getBoundingClientRect();
      var outer = frame.getBoundingClientRect();
      frame.scrollLeft += box.left + box.width / 2 - (outer.left + outer.width / 2);
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    centreHoods(document);
    var askForm = document.getElementById("ask-form");
    if (askForm) {
      setUpQuestionBox(askForm, true);
      if (askForm.dataset.autoask === "1") ask(askForm);
    }
    var searchForm = document.getElementById("search-form");
    if (searchForm) setUpQuestionBox(searchForm, false);

    document.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && running) stop();
    });

    Array.prototype.forEach.call(document.querySelectorAll("button[data-copy]"), function (button) {
      button.addEventListener("click", function () {
        var field = document.getElementById(button.dataset.copy);
        field.select();
        var manual = function () { button.textContent = "Selected: press Ctrl+C"; };
        if (navigator.clipboard && window.isSecureContext) {
          navigator.clipboard.writeText(field.value).then(
            function () { button.textContent = "Copied"; }, manual
          );
        } else {
          manual();
        }
      });
    });
    var permalink = document.getElementById("permalink");
    if (permalink) permalink.addEventListener("focus", function () { permalink.select(); });

    // The code view shows a small file whole: bring the cited lines into sight, a few
    // lines of context above them.
    var cited = document.querySelectorAll("tr.hl");
    if (cited.length && !window.location.hash) {
      var top = cited[0].getBoundingClientRect().top;
      var bottom = cited[cited.length - 1].getBoundingClientRect().bottom;
      if (top < 0 || bottom > window.innerHeight) {
        window.scrollBy(0, top - Math.min(window.innerHeight / 4, 120));
      }
    }
  });
})();
