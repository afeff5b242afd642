import socket,sys
for p in sys.argv[1:]:
    s=socket.socket(socket.AF_UNIX)
    try:
        s.connect(p); print(s.recv(100).decode().strip())
    except Exception as e: print("fail",p,e)
