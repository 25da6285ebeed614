"""The Vocal Sandbox web console: a local page for one sandbox session (`situated sandbox --web`).

The page shows the camera image (refreshed after every action), the conversation, the plan before it runs with
confirm / cancel / correct, teaching prompts, click-to-point on the image, a library browser and, with `--speech`,
recorded utterances transcribed and confirmed before use. `server.serve` runs it (loopback by default; any other
address needs a token), `app.create_app` is the FastAPI app, `console.WebConsole` what it does without the web,
`runner.SessionRunner` keeps the session on one thread. Needs the ``web`` extra (fastapi, uvicorn, websockets).
"""
