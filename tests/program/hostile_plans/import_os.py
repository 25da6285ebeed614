# expect: parse-error line=4
def plan():
	walk('kitchen')
	import os
	os.system('touch pwned.txt')
